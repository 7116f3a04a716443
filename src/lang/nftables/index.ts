export * from './model.js';
export * from './print.js';
export * from './safe-text.js';
export * from './names.js';
export * from './canonical.js';
export * from './state.js';
export * from './read.js';
export * from './lazy-read.js';
