import Foundation
import HTTPTypes
import Hummingbird
import Mustache
import PhotosCore
import PhotosModel

/// Renders the console's pages: a template from `EmbeddedAssets` inside the layout, HTML-escaped
/// by Mustache (`{{…}}`) except where a template says otherwise for HTML the console made.
struct ConsolePages: Sendable {
    let library: MustacheLibrary

    init() throws {
        var library = MustacheLibrary()
        for (name, text) in EmbeddedAssets.templates { try library.register(text, named: name) }
        self.library = library
    }

    /// `template` rendered with `values` in the layout, for `session`'s operator.
    func page(
        _ template: String, title: String, values: [String: Any], session: ConsoleSession?,
        status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]
    ) -> Response {
        var values = values
        if let session { values["csrf"] = session.csrfToken }
        let content = library.render(Self.withoutNils(values) ?? [:], withTemplate: template) ?? ""
        var layout: [String: Any] = ["title": title, "content": content]
        if let session {
            layout["operator"] = ["name": session.operator.name, "role": session.operator.role.rawValue, "csrf": session.csrfToken]
        }
        let html = library.render(layout, withTemplate: "layout") ?? ""
        var fields = headers
        fields[.contentType] = "text/html; charset=utf-8"
        return Response(status: status, headers: fields, body: .init(byteBuffer: ByteBuffer(string: html)))
    }

    /// `value` with every nil optional inside it taken out (Mustache would take a boxed nil for
    /// a value and show "nil"), so `{{#name}}` sections and `{{name}}` see nothing there.
    static func withoutNils(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            guard let wrapped = mirror.children.first?.value else { return nil }
            return withoutNils(wrapped)
        }
        if let dictionary = value as? [String: Any] { return dictionary.compactMapValues(withoutNils) }
        if let array = value as? [Any] { return array.compactMap(withoutNils) }
        return value
    }

    /// A page that says what went wrong, with a way back.
    func errorPage(status: HTTPResponse.Status, message: String, session: ConsoleSession?) -> Response {
        page(
            "message", title: status.reasonPhrase,
            values: ["heading": status.reasonPhrase, "message": message, "back": "/console/sessions"],
            session: session, status: status)
    }

    /// A redirect after a form was handled (303: the browser asks for the page with GET).
    static func redirect(_ location: String, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.location] = location
        return Response(status: .seeOther, headers: fields)
    }
}

/// A posted form's fields (`application/x-www-form-urlencoded`), at most 16 KB.
struct ConsoleForm {
    let fields: [String: String]

    static let maxBytes = 16 * 1_024

    init(_ request: Request, context: ConsoleRequestContext) async throws {
        let type = request.headers[.contentType] ?? ""
        guard type.lowercased().hasPrefix("application/x-www-form-urlencoded") else {
            throw ConsoleRefusal(status: .unsupportedMediaType, message: "Forms are posted as application/x-www-form-urlencoded.")
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: Self.maxBytes)
        } catch {
            throw ConsoleRefusal(status: .contentTooLarge, message: "The form is larger than \(Self.maxBytes / 1_024) KB.")
        }
        fields = Self.parse(String(buffer: body))
    }

    /// `a=1&b=x+y` → ["a": "1", "b": "x y"]; the first of a repeated name counts.
    static func parse(_ text: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? ""
            }
            let name = decode(parts[0])
            if fields[name] == nil { fields[name] = parts.count > 1 ? decode(parts[1]) : "" }
        }
        return fields
    }

    subscript(_ name: String) -> String? { fields[name] }

    /// Refuses the form unless it carries `expected` as its `csrf` field (compared in constant time).
    func requireCSRF(_ expected: String) throws {
        guard let given = fields["csrf"], ConstantTime.equal(given, expected) else {
            throw ConsoleRefusal(status: .forbidden, message: "The form is missing its security token (CSRF): reload the page and try again.")
        }
    }
}

/// Comparison whose time does not depend on where two strings differ.
enum ConstantTime {
    static func equal(_ a: String, _ b: String) -> Bool {
        let (x, y) = (Array(a.utf8), Array(b.utf8))
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
