import Foundation
import PhotosTestSupport

/// Runs the built `photos-admin` (and shell lines using it) as real processes.
enum AdminProcess {
    static var packageRoot: String { BuiltProducts.packageRoot }

    typealias Result = ProcessResult

    /// Runs `photos-admin arguments…` with `stdin` in `directory`.
    static func admin(_ arguments: [String], stdin: String = "", in directory: String, environment: [String: String] = [:]) async throws -> ProcessResult {
        try await runProcess(BuiltProducts.binDirectory + "/photos-admin", arguments, stdin: stdin, in: directory, environment: environment)
    }

    /// Runs `bash -c line` with the binaries first on PATH.
    static func shell(_ line: String, in directory: String, environment: [String: String] = [:]) async throws -> ProcessResult {
        try await runProcess("/bin/bash", ["-o", "pipefail", "-c", line], in: directory, environment: environment)
    }
}
