// The core room's barrel: shared types, keys, resource versions, errors and the clock.
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
