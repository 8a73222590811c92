export { compiledCheck, identityReason, type CheckResult, type SchemaCheck } from './compiled-check.js';
