// The observability room's barrel: diagnostics_channel names.
export * from './channels.js';
