// The traced side of the controller benchmark: the runtime with a tracerProvider whose spans are all
// sampled, batched and handed to an exporter that drops them — the cost of tracing in the process,
// without the network an OTLP exporter adds.

import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';

/**
 * A provider that samples every span and drops them in batches; `spans()` counts what it was handed.
 * `traced(fn)` runs `fn` with the context manager a Node SDK registers (AsyncLocalStorage: the reconcile
 * span is the active context during the reconcile), disabled again after it so that the untraced
 * sides run without its async hooks.
 */
export function discardingTracerProvider(): { provider: BasicTracerProvider; spans: () => number; traced: <R>(fn: () => Promise<R>) => Promise<R> } {
  let exported = 0;
  const exporter: SpanExporter = {
    export: (spans: ReadableSpan[], done) => {
      exported += spans.length;
      done({ code: 0 });
    },
    shutdown: async () => undefined,
  };
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 65_536, maxExportBatchSize: 4_096, scheduledDelayMillis: 200 })] });
  const traced = async <R>(fn: () => Promise<R>): Promise<R> => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    try {
      return await fn();
    } finally {
      context.disable();
    }
  };
  return { provider, spans: () => exported, traced };
}
