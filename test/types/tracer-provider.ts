// Type-level tests of the tracerProvider option (checked by tsc): the SDK's real providers and the api's
// TracerProvider type are assignable to our structural TracerProviderLike; something else is not.

import { trace, type TracerProvider } from '@opentelemetry/api';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type { TracerProviderLike } from '../../src/index.js';
import type { ControllerOptions } from '../../src/controller.js';
import type { ManagerOptions } from '../../src/operations/index.js';
import type { WebhookServerOptions } from '../../src/webhook/index.js';

export function checks(): void {
  const sdk: TracerProviderLike = new BasicTracerProvider();
  const api: TracerProvider = trace.getTracerProvider();
  const global: TracerProviderLike = api;
  const controller: ControllerOptions = { tracerProvider: new BasicTracerProvider() };
  const manager: ManagerOptions = { tracerProvider: trace.getTracerProvider() };
  const webhook: Pick<WebhookServerOptions, 'tracerProvider'> = { tracerProvider: new BasicTracerProvider() };
  // @ts-expect-error -- a tracer is not a provider
  const wrong: TracerProviderLike = new BasicTracerProvider().getTracer('x');
  void [sdk, global, controller, manager, webhook, wrong];
}
