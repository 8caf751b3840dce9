import HTTPTypes
import Hummingbird
import PhotosListener
import Tracing

/// The HTTP server span of a request (`tracing.otlpEndpoint`), as Hummingbird's
/// `TracingMiddleware` makes it — an incoming `traceparent` honoured, the span named by the route,
/// method, route and status recorded, the handlers run inside it — but with the path as the log
/// shows it (`/v1/sessions/s-1a2b3c4d/actions`): Hummingbird's records `url.path` as it came, and
/// a span leaves the machine, so a session id must not be in it. (Wrapping Hummingbird's with a
/// rewritten request does not compile under strict concurrency: its `next` cannot be handed on.)
struct RedactedTracingMiddleware<Context: ClientAddressContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: @concurrent (Request, Context) async throws -> Response) async throws -> Response {
        var parent = ServiceContext.current ?? ServiceContext.topLevel
        InstrumentationSystem.instrument.extract(request.headers, into: &parent, using: HeaderExtractor())
        let span = startSpan("HTTP \(request.method.rawValue)", context: parent, ofKind: .server)
        span.updateAttributes { attributes in
            attributes["http.request.method"] = request.method.rawValue
            attributes["url.path"] = RequestLogMiddleware<Context>.loggedPath(request.uri.path)
            attributes["client.address"] = context.clientAddress
            attributes["user_agent.original"] = request.headers[.userAgent]
        }
        defer { span.end() }
        do {
            let response = try await ServiceContext.$current.withValue(span.context) {
                try await next(request, context)
            }
            finish(span, context: context, status: Int(response.status.code))
            return response
        } catch {
            let status = (error as? any HTTPResponseError)?.status.code ?? 500
            finish(span, context: context, status: status)
            if status >= 500 { span.setStatus(SpanStatus(code: .error)) }
            span.recordError(error)
            throw error
        }
    }

    private func finish(_ span: any Span, context: Context, status: Int) {
        if let route = context.endpointPath { span.operationName = "\(span.operationName) \(route)" }
        span.updateAttributes { attributes in
            attributes["http.route"] = context.endpointPath
            attributes["http.response.status_code"] = status
        }
    }
}

/// Reads propagation headers (`traceparent`, `tracestate`) from a request's fields.
private struct HeaderExtractor: Extractor {
    func extract(key name: String, from headers: HTTPFields) -> String? {
        HTTPField.Name(name).flatMap { headers[$0] }
    }
}
