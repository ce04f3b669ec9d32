import { describeRuleCases } from "../rule-testing.js";

describeRuleCases("parse-error", [["create tabel t (id bigint);", "create table t (id bigint);"]]);
