// The Event recorder (events.k8s.io/v1): Events about objects, aggregated into series, rate-limited, written in the background.
export { EventRecorder } from './recorder.js';
export { eventsV1Resource } from './types.js';
export type { EventDetails, EventObject, EventRecorderOptions, EventRecorderStats, EventsV1Event, EventSubject, EventType } from './types.js';
