import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("ban-char-field", [["create table t (code char(2));", "create table t (code text);"]]);
