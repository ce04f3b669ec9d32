/** An in-memory agent store: stands in for the app's existing data layer. */
export interface Agent {
  readonly id: string;
  readonly name: string;
  readonly owner: string | null;
}

export class AgentStore {
  readonly #agents = new Map<string, Agent>();
  #next = 1;

  list(ids: ReadonlySet<string>): Agent[] {
    const all = [...this.#agents.values()];
    return ids.has("*") ? all : all.filter((agent) => ids.has(agent.id));
  }

  get(id: string): Agent | undefined {
    return this.#agents.get(id);
  }

  /** `id` defaults to the next free `a<n>`; an explicit id replaces any agent with that id. */
  create(name: string, owner: string | null, id = this.#freeId()): Agent {
    const agent = { id, name, owner };
    this.#agents.set(id, agent);
    return agent;
  }

  #freeId(): string {
    while (this.#agents.has(`a${this.#next}`)) this.#next++;
    return `a${this.#next++}`;
  }

  delete(id: string): boolean {
    return this.#agents.delete(id);
  }
}
