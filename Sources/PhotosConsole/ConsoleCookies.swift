import Foundation
import HTTPTypes

/// The console's cookies: the session's (`photosd_console`) and, before sign-in, the form's
/// CSRF token (`photosd_console_form`). Both `HttpOnly`, `SameSite=Strict`, `Path=/console`, and
/// `Secure` when `console.secureCookies` is set.
struct ConsoleCookies: Sendable {
    static let session = "photosd_console"
    static let signInForm = "photosd_console_form"

    let secure: Bool

    /// The value of cookie `name` in the request's `Cookie` headers.
    static func value(_ name: String, in headers: HTTPFields) -> String? {
        for header in headers[values: .cookie] {
            for pair in header.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == name else { continue }
                return parts[1].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// `Set-Cookie` for `name` = `value`; `maxAge` 0 deletes it, nil keeps it until the browser
    /// closes (the session's: the server ends it after `console.sessionMinutes` idle).
    func setCookie(_ name: String, _ value: String, maxAge: Int?) -> String {
        var cookie = "\(name)=\(value); Path=/console; HttpOnly; SameSite=Strict"
        if let maxAge { cookie += "; Max-Age=\(maxAge)" }
        if secure { cookie += "; Secure" }
        return cookie
    }
}
