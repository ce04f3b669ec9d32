import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("adding-foreign-key-constraint", [
  [
    "alter table accounts add column owner bigint references users (id);",
    "alter table accounts add constraint accounts_owner_fk foreign key (owner) references users (id) not valid;",
  ],
]);
