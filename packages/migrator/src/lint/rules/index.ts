// Every rule of `platform-migrate lint`, one file each; the order is the README table's (a test checks both).
import addingFieldWithDefault from "./adding-field-with-default.js";
import addingForeignKeyConstraint from "./adding-foreign-key-constraint.js";
import addingNotNullableField from "./adding-not-nullable-field.js";
import addingRequiredField from "./adding-required-field.js";
import addingSerialPrimaryKeyField from "./adding-serial-primary-key-field.js";
import banAlterDomainWithAddConstraint from "./ban-alter-domain-with-add-constraint.js";
import banCharField from "./ban-char-field.js";
import banConcurrentIndexCreationInTransaction from "./ban-concurrent-index-creation-in-transaction.js";
import banCreateDomainWithConstraint from "./ban-create-domain-with-constraint.js";
import banDropColumn from "./ban-drop-column.js";
import banDropDatabase from "./ban-drop-database.js";
import banDropNotNull from "./ban-drop-not-null.js";
import banDropTable from "./ban-drop-table.js";
import banDuplicateColumnAssignments from "./ban-duplicate-column-assignments.js";
import banTruncateCascade from "./ban-truncate-cascade.js";
import banUncommittedTransaction from "./ban-uncommitted-transaction.js";
import changingColumnType from "./changing-column-type.js";
import constraintMissingNotValid from "./constraint-missing-not-valid.js";
import disallowedUniqueConstraint from "./disallowed-unique-constraint.js";
import fileTooLarge from "./file-too-large.js";
import identifierTooLong from "./identifier-too-long.js";
import invalidSilence from "./invalid-silence.js";
import noTransactionSingleStatement from "./no-transaction-single-statement.js";
import parseError from "./parse-error.js";
import preferBigintOverInt from "./prefer-bigint-over-int.js";
import preferBigintOverSmallint from "./prefer-bigint-over-smallint.js";
import preferIdentity from "./prefer-identity.js";
import preferRepack from "./prefer-repack.js";
import preferRobustStmts from "./prefer-robust-stmts.js";
import preferTextField from "./prefer-text-field.js";
import preferTimestamptz from "./prefer-timestamptz.js";
import renamingColumn from "./renaming-column.js";
import renamingTable from "./renaming-table.js";
import requireConcurrentIndexCreation from "./require-concurrent-index-creation.js";
import requireConcurrentIndexDeletion from "./require-concurrent-index-deletion.js";
import requireConcurrentPartitionDetach from "./require-concurrent-partition-detach.js";
import requireConcurrentReindex from "./require-concurrent-reindex.js";
import requireEnumValueOrdering from "./require-enum-value-ordering.js";
import requireLockTimeout from "./require-lock-timeout.js";
import requireStatementTimeout from "./require-statement-timeout.js";
import requireTableSchema from "./require-table-schema.js";
import transactionNesting from "./transaction-nesting.js";
import unusedSilence from "./unused-silence.js";

export const rules = [
  requireConcurrentIndexCreation,
  requireConcurrentIndexDeletion,
  banConcurrentIndexCreationInTransaction,
  noTransactionSingleStatement,
  requireConcurrentReindex,
  requireConcurrentPartitionDetach,
  constraintMissingNotValid,
  addingForeignKeyConstraint,
  changingColumnType,
  addingNotNullableField,
  addingRequiredField,
  addingFieldWithDefault,
  addingSerialPrimaryKeyField,
  disallowedUniqueConstraint,
  banDropTable,
  banDropColumn,
  banDropNotNull,
  banDropDatabase,
  banTruncateCascade,
  renamingTable,
  renamingColumn,
  requireLockTimeout,
  requireStatementTimeout,
  preferRobustStmts,
  identifierTooLong,
  transactionNesting,
  banUncommittedTransaction,
  banDuplicateColumnAssignments,
  banCreateDomainWithConstraint,
  banAlterDomainWithAddConstraint,
  requireEnumValueOrdering,
  preferTimestamptz,
  banCharField,
  preferTextField,
  preferBigintOverInt,
  preferBigintOverSmallint,
  preferIdentity,
  preferRepack,
  requireTableSchema,
  parseError,
  fileTooLarge,
  invalidSilence,
  unusedSilence,
] as const;
