import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("ban-truncate-cascade", [["truncate accounts cascade;", "truncate accounts;"]]);
