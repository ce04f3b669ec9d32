import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("ban-drop-table", [["drop table accounts;", "create table t (id bigint); drop table t;"]]);
