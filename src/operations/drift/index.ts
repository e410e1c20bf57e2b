// The live drift audit: a metadata-only list diffed against an informer's cache, reported, optionally repaired by a relist.
export { DriftAudit } from './audit.js';
export type { Divergence, DriftKind } from './diff.js';
export type { AuditedCache, AuditedInformer, DriftAuditCounts, DriftAuditOptions, DriftAuditStats, DriftReport } from './types.js';
