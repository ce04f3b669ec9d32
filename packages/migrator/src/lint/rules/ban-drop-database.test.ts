import { describeRuleCases, NO_TX } from "../rule-testing.js";

describeRuleCases("ban-drop-database", [["drop database accounts;", "drop schema accounts;", NO_TX]]);
