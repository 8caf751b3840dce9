import ArgumentParser
import Foundation

/// A password piped to standard input (`--password-stdin`): passwords never go on the command
/// line, where `ps` and shell histories would keep them. One trailing newline is dropped.
enum PasswordInput {
    static func read() throws -> String {
        let data = FileHandle.standardInput.readDataToEndOfFile()
        guard var password = String(data: data, encoding: .utf8) else { throw ValidationError("the password is not valid UTF-8") }
        if password.hasSuffix("\r\n") { password.removeLast(2) } else if password.hasSuffix("\n") { password.removeLast() }
        guard !password.isEmpty else { throw ValidationError("no password on standard input") }
        return password
    }
}
