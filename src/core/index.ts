// The core room's barrel: shared types, keys, resource versions, errors, the clock and the task scope.
export * from './types.js';
export * from './keys.js';
export * from './resource-version.js';
export * from './errors.js';
export * from './clock.js';
export * from './preview.js';
export * from './label-selector.js';
export * from './selector-parser.js';
export * from './field-selector.js';
export * from './options.js';
export * from './log.js';
export * from './task-scope.js';
export * from './resources.js';
export * from './abort.js';
export * from './shard-selector.js';
