import Logging
import OTel
import PhotosBuildInfo
import PhotosCore
import PhotosModel
import ServiceLifecycle
import Tracing

/// Traces by OTLP/HTTP (`tracing.otlpEndpoint`), through swift-otel and swift-distributed-tracing:
/// one trace per request — the HTTP server span (an incoming `traceparent` honoured), the session
/// action's span, the storage operations' spans — batched and exported in the background.
/// With the endpoint empty nothing is set up: the tracer stays the no-op one.
public struct PhotosTracing: Sendable {
    /// The exporter's background work, to run beside the server (it sends what is left at
    /// shutdown); nil when tracing is off.
    public let service: (any Service)?
    /// Adds `trace_id` and `span_id` to every log line written inside a span; nil when off.
    public let metadataProvider: Logger.MetadataProvider?

    public var isEnabled: Bool { service != nil }

    /// No tracing.
    public static let off = PhotosTracing(service: nil, metadataProvider: nil)

    /// Sets up the process's tracer for `configuration` (once per process: it bootstraps
    /// swift-distributed-tracing's `InstrumentationSystem`).
    public static func bootstrap(_ configuration: PhotosConfiguration) throws -> PhotosTracing {
        guard !configuration.tracingOTLPEndpoint.isEmpty else { return .off }
        var otel = OTel.Configuration.default
        otel.serviceName = "photosd"
        otel.resourceAttributes = ["service.version": PhotosVersion.current, "vcs.revision": PhotosBuild.commit]
        otel.logs.enabled = false
        otel.metrics.enabled = false
        otel.traces.enabled = true
        otel.traces.exporter = .otlp
        otel.traces.otlpExporter.protocol = .httpProtobuf
        otel.traces.otlpExporter.endpoint = tracesURL(configuration.tracingOTLPEndpoint)
        otel.propagators = [.traceContext]
        let (tracer, service) = try OTel.makeTracingBackend(configuration: otel)
        InstrumentationSystem.bootstrap(tracer)
        return PhotosTracing(service: service, metadataProvider: OTel.makeLoggingMetadataProvider())
    }

    /// The traces URL of an OTLP/HTTP endpoint: a collector's base URL gets `/v1/traces`; a URL
    /// that names it already is used as it is.
    static func tracesURL(_ endpoint: String) -> String {
        if endpoint.hasSuffix("/v1/traces") { return endpoint }
        return (endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint) + "/v1/traces"
    }
}
