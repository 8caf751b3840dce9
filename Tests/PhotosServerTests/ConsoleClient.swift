import Foundation
import PhotosTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A browser's part for the console's HTTP tests: keeps the cookies it is given, follows no
/// redirect (the tests look at them), posts forms, and reads the CSRF token out of a page.
final class ConsoleClient: @unchecked Sendable {
    // @unchecked: `cookies` is only touched by one test's sequential awaits, never concurrently.
    let baseURL: String
    var cookies: [String: String] = [:]
    /// Headers sent with every request (a forged `X-Forwarded-For`, say).
    var extraHeaders: [String: String] = [:]
    private let session: URLSession

    init(baseURL: String) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        session = URLSession(configuration: configuration, delegate: NoRedirects(), delegateQueue: nil)
    }

    /// One answer: status, headers (names lowercased; every `Set-Cookie`), body.
    struct Answer {
        var status: Int
        var headers: [String: String]
        var setCookies: [String]
        var body: String

        /// The value of the first `name="csrf" value="…"` in the page.
        var csrf: String? {
            guard let match = body.firstMatch(of: /name="csrf" value="([^"]+)"/) else { return nil }
            return String(match.1)
        }
    }

    func get(_ path: String) async throws -> Answer { try await send("GET", path, form: nil) }

    func post(_ path: String, form: [String: String]) async throws -> Answer { try await send("POST", path, form: form) }

    private func send(_ method: String, _ path: String, form: [String: String]?) async throws -> Answer {
        var request = URLRequest(url: URL(string: baseURL + path)!)
        request.httpMethod = method
        for (name, value) in extraHeaders { request.setValue(value, forHTTPHeaderField: name) }
        if !cookies.isEmpty {
            request.setValue(cookies.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: "; "), forHTTPHeaderField: "Cookie")
        }
        if let form {
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-_.~")
            request.httpBody = Data(form.map { "\($0.key)=\($0.value.addingPercentEncoding(withAllowedCharacters: allowed) ?? "")" }
                .joined(separator: "&").utf8)
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields { headers[String(describing: name).lowercased()] = String(describing: value) }
        // Foundation joins repeated Set-Cookie headers with ", "; cookie values here hold no comma.
        let setCookies = headers["set-cookie"].map { $0.components(separatedBy: ", ") } ?? []
        for cookie in setCookies {
            guard let pair = cookie.split(separator: ";").first, let equals = pair.firstIndex(of: "=") else { continue }
            let name = String(pair[..<equals]), value = String(pair[pair.index(after: equals)...])
            if cookie.contains("Max-Age=0") { cookies[name] = nil } else { cookies[name] = value }
        }
        return Answer(status: http.statusCode, headers: headers, setCookies: setCookies, body: String(decoding: data, as: UTF8.self))
    }

    /// Signs in as `name` through the form, as a browser would; returns the answer to the post.
    @discardableResult
    func signIn(_ name: String, password: String) async throws -> Answer {
        let form = try await get("/console/sign-in")
        return try await post("/console/sign-in", form: ["csrf": form.csrf ?? "", "username": name, "password": password])
    }
}

private final class NoRedirects: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
