export * from './model.js';
export * from './print.js';
export * from './safe-text.js';
export * from './names.js';
