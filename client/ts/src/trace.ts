import type { Interceptor } from "@connectrpc/connect";

/**
 * Trace context. A program that traces with OpenTelemetry has
 * @opentelemetry/api (this package's optional peer dependency) and sets up
 * a context manager and a propagator (the SDK's NodeSDK does both); then
 * every call carries the trace context of the active span, W3C traceparent
 * and tracestate with the SDK's default propagator, and hashlined, when it
 * traces (--otlp-endpoint), continues the trace: its spans of the call are
 * children of the caller's span. A program without the package loads
 * nothing and sends nothing; one that has it but no active span sends
 * nothing either.
 *
 * The API is the one OpenTelemetry asks instrumented libraries to use:
 * whatever propagator and context manager the program registered with it
 * are used, and none is registered here.
 */

/** The part of @opentelemetry/api used here. */
interface OtelApi {
  context: { active(): unknown };
  propagation: { inject(context: unknown, carrier: Record<string, string>): void };
  trace: { getSpanContext(context: unknown): unknown };
}

/**
 * @opentelemetry/api as the program has it; undefined without it. It is
 * looked for when this module loads, in the background, rather than at the
 * first call: loading it takes tens of milliseconds, which the first call
 * would otherwise wait for. The name is in a variable so that
 * type-checking and bundlers leave the import alone and the package stays
 * optional.
 */
const otelApiName = "@opentelemetry/api";
const otelApi: Promise<OtelApi | undefined> = import(otelApiName).then(
  (m: OtelApi) => m,
  () => undefined,
);

/** Adds the active span's trace context to the call's headers. */
export const traceContext: Interceptor = (next) => async (req) => {
  const otel = await otelApi;
  if (otel !== undefined) {
    const ctx = otel.context.active();
    if (otel.trace.getSpanContext(ctx) !== undefined) {
      const carrier: Record<string, string> = {};
      otel.propagation.inject(ctx, carrier);
      for (const [key, value] of Object.entries(carrier)) {
        req.header.set(key, value);
      }
    }
  }
  return next(req);
};
