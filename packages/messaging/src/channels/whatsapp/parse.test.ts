import { describe, expect, it } from "vitest";
import { InvalidPayloadError } from "../../errors.js";
import { parseWhatsAppDelivery } from "./parse.js";

const ACCOUNT = "111";

function deliveryOf(messages: object[], metadata: object | undefined = { phone_number_id: "222" }) {
  return {
    object: "whatsapp_business_account",
    entry: [{ id: "waba", changes: [{ field: "messages", value: { metadata, messages } }] }],
  };
}

function only(message: object) {
  const parsed = parseWhatsAppDelivery(deliveryOf([{ id: "m1", from: "491", ...message }]), ACCOUNT);
  if (parsed.kind !== "events") throw new Error("expected events");
  return parsed.messages[0];
}

describe("parseWhatsAppDelivery", () => {
  it("ignores other objects", () => {
    expect(parseWhatsAppDelivery({ object: "instagram" }, ACCOUNT)).toEqual({ kind: "ignored" });
  });

  it.each([[[]], ["text"], [null], [42]])("rejects a body that is not an object: %j", (body) => {
    expect(() => parseWhatsAppDelivery(body, ACCOUNT)).toThrow(InvalidPayloadError);
  });

  it("returns a message without an id as invalid, naming where, and keeps the others", () => {
    const bad = { from: "491", type: "text" };
    const parsed = parseWhatsAppDelivery(
      deliveryOf([bad, { id: "m2", from: "492", type: "text", text: { body: "ok" } }]),
      ACCOUNT,
    );
    expect(parsed).toMatchObject({
      kind: "events",
      messages: [{ id: "m2", from: "492", text: "ok" }],
      invalid: [
        {
          id: undefined,
          from: "491",
          type: "text",
          accountId: "222",
          reason: expect.stringMatching(/^entry\.0\.changes\.0\.value\.messages\.0\.id: /),
          raw: bad,
        },
      ],
    });
  });

  it("reads an empty or null identifier as absent, and passes over contacts and statuses of another shape", () => {
    const parsed = parseWhatsAppDelivery(
      {
        object: "whatsapp_business_account",
        entry: [
          {
            changes: [
              {
                value: {
                  contacts: { user_id: "US.9" },
                  statuses: "retyped",
                  messages: [
                    { id: "a", from: "", from_user_id: "US.1", type: "text", text: { body: "A" } },
                    { id: "b", from: null, from_user_id: "US.2", type: "text", text: { body: "B" } },
                    { id: "c", from: null, from_user_id: "", type: "text", text: { body: "C" } },
                  ],
                },
              },
            ],
          },
        ],
      },
      ACCOUNT,
    );
    expect(parsed).toMatchObject({
      kind: "events",
      statuses: 0,
      messages: [
        { id: "a", from: "US.1" },
        { id: "b", from: "US.2" },
      ],
      invalid: [{ id: "c", reason: expect.stringMatching(/messages\.2: no sender/) }],
    });
  });

  it.each([
    ["entry not an array", { entry: {} }],
    ["a body that is not an object", null],
  ])("refuses the whole body only when the envelope is wrong: %s", (_, body) => {
    const delivery = body === null ? body : { object: "whatsapp_business_account", ...body };
    expect(() => parseWhatsAppDelivery(delivery, ACCOUNT)).toThrow(InvalidPayloadError);
  });

  it("takes every message of every entry and change, and counts statuses apart", () => {
    const parsed = parseWhatsAppDelivery(
      {
        object: "whatsapp_business_account",
        entry: [
          {
            changes: [
              { value: { messages: [{ id: "a", from: "1", type: "text", text: { body: "A" } }] } },
              { value: { statuses: [{ id: "s1" }, { id: "s2" }] } },
            ],
          },
          {
            changes: [
              {
                value: {
                  metadata: { phone_number_id: "333" },
                  messages: [
                    { id: "b", from: "2", type: "text", text: { body: "B" } },
                    { id: "c", from: "3", type: "text", text: { body: "C" } },
                  ],
                },
              },
            ],
          },
        ],
      },
      ACCOUNT,
    );
    expect(parsed).toMatchObject({ kind: "events", statuses: 2 });
    if (parsed.kind !== "events") return;
    expect(parsed.messages.map((m) => [m.id, m.accountId, m.from, m.text])).toEqual([
      ["a", ACCOUNT, "1", "A"],
      ["b", "333", "2", "B"],
      ["c", "333", "3", "C"],
    ]);
  });

  it("text: the body", () => {
    expect(only({ type: "text", text: { body: "hi" } })).toMatchObject({
      type: "text",
      text: "hi",
      supported: true,
    });
  });

  it.each(["image", "video", "document"])("%s: the caption as text, the media id kept", (type) => {
    const message = only({
      type,
      [type]: { id: "media-1", mime_type: "x/y", caption: "look", filename: "f.pdf" },
    });
    expect(message).toMatchObject({
      type,
      text: "look",
      supported: true,
      media: { id: "media-1", mimeType: "x/y", filename: "f.pdf" },
    });
  });

  it("image without a caption: empty text", () => {
    expect(only({ type: "image", image: { id: "media-2" } })).toMatchObject({
      text: "",
      media: { id: "media-2" },
    });
  });

  it("audio: the media, no text", () => {
    expect(
      only({ type: "audio", audio: { id: "voice-1", mime_type: "audio/ogg", voice: true } }),
    ).toMatchObject({
      type: "audio",
      text: "",
      supported: true,
      media: { id: "voice-1", mimeType: "audio/ogg" },
    });
  });

  it.each([
    [
      "button_reply",
      { type: "button_reply", button_reply: { id: "yes", title: "Yes please" } },
      "Yes please",
    ],
    [
      "list_reply",
      { type: "list_reply", list_reply: { id: "r1", title: "Row one", description: "d" } },
      "Row one",
    ],
  ])("interactive %s: the title", (_, interactive, title) => {
    expect(only({ type: "interactive", interactive })).toMatchObject({ text: title, supported: true });
  });

  it.each([
    ["sticker", { type: "sticker", sticker: { id: "s" } }],
    ["location", { type: "location", location: { latitude: 1, longitude: 2 } }],
    ["unknown interactive", { type: "interactive", interactive: { type: "nfm_reply", nfm_reply: {} } }],
    ["text without a body", { type: "text" }],
  ])("%s: not supported", (_, message) => {
    expect(only(message)).toMatchObject({ supported: false, text: "" });
  });

  it("keeps the raw message", () => {
    const raw = { id: "m1", from: "491", type: "text", text: { body: "x" }, context: { id: "prev" } };
    expect(only(raw)?.raw).toEqual(raw);
  });
});
