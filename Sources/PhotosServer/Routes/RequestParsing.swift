import Foundation
import HTTPTypes
import Hummingbird
import Navigation
import NIOCore
import NIOFoundationEssentialsCompat
import PhotosCore
import PhotosModel
import Sessions

/// Reading request bodies, parameters and headers, with a clear `400` for anything wrong.
enum RequestParsing {
    /// The body as JSON of type `T`. Refuses bodies over `limit` (`413`), other content types,
    /// malformed JSON, wrong types and missing fields (`400`, naming the problem).
    static func decode<T: Decodable>(_ type: T.Type, from request: Request, limit: Int, allowEmpty: Bool = false) async throws -> T {
        try await decode(type, from: request, limit: limit, allowEmpty: allowEmpty, fastPath: nil)
    }

    /// As `decode`, trying `fastPath` on the body's bytes first: a reader for the common shape
    /// of a hot request that returns nil for anything it is not sure of, which then goes to
    /// `JSONDecoder` (and its error messages) as usual.
    static func decode<T: Decodable>(
        _ type: T.Type, from request: Request, limit: Int, allowEmpty: Bool = false,
        fastPath: ((UnsafeRawBufferPointer) -> T?)?
    ) async throws -> T {
        let contentType = request.headers[.contentType]
        if let contentType, !isJSON(contentType) {
            throw PhotosError(.unsupportedMediaType, "Content-Type must be application/json, not \(contentType.prefix(60))")
        }
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw PhotosError(.payloadTooLarge, "request body is larger than \(limit) bytes")
        } catch {
            // The body's stream fails only when its connection does.
            throw ClientDisconnected(underlying: error)
        }
        if contentType == nil, buffer.readableBytes > 0 {
            throw PhotosError(.unsupportedMediaType, "a request body needs Content-Type: application/json")
        }
        if let key = buffer.withUnsafeReadableBytes(JSONDuplicateKeys.first(in:)) {
            throw PhotosError.badRequest("the key \"\(key.prefix(40))\" appears twice in one object")
        }
        if let fastPath, let value = buffer.withUnsafeReadableBytes(fastPath) { return value }
        var bytes = Data(buffer: buffer)
        if bytes.isEmpty && allowEmpty { bytes = Data("{}".utf8) }
        guard !bytes.isEmpty else { throw PhotosError.badRequest("request body is empty; expected a JSON object") }
        do {
            return try JSONDecoder().decode(T.self, from: bytes)
        } catch let error as PhotosError {
            throw error
        } catch let error as DecodingError {
            throw PhotosError.badRequest(describe(error))
        } catch {
            throw PhotosError.badRequest("malformed JSON")
        }
    }

    /// True for `application/json`, with or without parameters (`; charset=utf-8`), in any case;
    /// not for `application/jsonx` or `application/json-patch+json`.
    /// Compares the UTF-8 bytes in place: every JSON request asks, and Foundation's trimming
    /// (through `NSString`) cost about 3 % of an action's CPU.
    static func isJSON(_ contentType: String) -> Bool {
        let expected = "application/json".utf8
        var utf8 = Substring(contentType).utf8
        if let semicolon = utf8.firstIndex(of: UInt8(ascii: ";")) { utf8 = utf8[..<semicolon] }
        func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        while let first = utf8.first, isBlank(first) { utf8 = utf8.dropFirst() }
        while let last = utf8.last, isBlank(last) { utf8 = utf8.dropLast() }
        guard utf8.count == expected.count else { return false }
        return zip(utf8, expected).allSatisfy { ASCII.matchesIgnoringCase($0, lowercase: $1) }
    }

    static func describe(_ error: DecodingError) -> String {
        func field(_ path: [any CodingKey]) -> String {
            path.isEmpty ? "body" : path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
        }
        switch error {
        case .keyNotFound(let key, let context):
            return "missing field \(field(context.codingPath + [key]))"
        case .typeMismatch(let type, let context):
            return "field \(field(context.codingPath)) has the wrong type (expected \(expected(type)))"
        case .valueNotFound(let type, let context):
            return "field \(field(context.codingPath)) must not be null (expected \(expected(type)))"
        case .dataCorrupted(let context):
            return context.codingPath.isEmpty ? "malformed JSON" : "field \(field(context.codingPath)) is invalid"
        @unknown default:
            return "malformed JSON"
        }
    }

    private static func expected(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Int.Type, is Int64.Type: "an integer"
        case is Bool.Type: "true or false"
        default: "\(type)"
        }
    }

    /// An integer query parameter in `range`, or `defaultValue` when absent.
    static func queryInt(_ request: Request, _ name: String, default defaultValue: Int, range: ClosedRange<Int>) throws -> Int {
        guard let text = request.uri.queryParameters[name[...]] else { return defaultValue }
        guard let value = Int(String(text)), range.contains(value) else {
            throw PhotosError.badRequest("query parameter \(name) must be an integer between \(range.lowerBound) and \(range.upperBound)")
        }
        return value
    }

    /// A positive integer id from the path.
    static func pathID(_ context: some RequestContext, _ name: String) throws -> Int64 {
        guard let text = context.parameters.get(name), let value = Int64(text), value > 0 else {
            throw PhotosError.notFound("no photo with id \(context.parameters.get(name)?.prefix(40) ?? "")")
        }
        return value
    }

    /// A session id from the path (the form we issue: base64url, at most 64 characters).
    static func sessionID(_ context: some RequestContext) throws -> String {
        let id = context.parameters.get("id") ?? ""
        guard (1...64).contains(id.utf8.count),
              id.utf8.allSatisfy({ $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
        else { throw PhotosError.notFound("no session with that id") }
        return id
    }

    /// The session secret of the `Authorization: Session <secret>` header, if any. Throws `401`
    /// for an `Authorization` of another form.
    static func sessionSecret(_ request: Request) throws -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        // On every action: matched on the bytes, with no allocation but the secret's.
        let scheme = "session ".utf8
        let bytes = header.utf8
        guard bytes.count > scheme.count, bytes.count <= scheme.count + 200,
              zip(bytes, scheme).allSatisfy({ $0 | 0x20 == $1 })
        else {
            throw PhotosError.unauthorized("Authorization must be \"Session <sessionSecret>\" on a session's requests")
        }
        return String(header.dropFirst(scheme.count))
    }

    /// The bearer token of the `Authorization` header, if any.
    static func bearerToken(_ request: Request) throws -> String? {
        guard let header = request.headers[.authorization] else { return nil }
        let parts = header.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer", !parts[1].isEmpty, parts[1].utf8.count <= 200 else {
            throw PhotosError.unauthorized("Authorization must be \"Bearer <token>\"")
        }
        return String(parts[1])
    }
}

/// The request's body stopped arriving: its connection closed or was cut (the request deadline).
struct ClientDisconnected: Error {
    let underlying: any Error
}

extension HTTPFields {
    /// `Idempotency-Key`: a retried action with the same key returns the first answer.
    static var idempotencyKey: HTTPField.Name { HTTPField.Name("Idempotency-Key") ?? .contentType }
}
