import Foundation

/// Runs the built `photos-admin` (and shell lines using it) as real processes.
enum AdminProcess {
    /// The directory holding the package's built executables (next to the test bundle).
    static let binDirectory: String = {
        if let explicit = ProcessInfo.processInfo.environment["PHOTOSD_BIN_DIR"] { return explicit }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        if let executable = Bundle.main.executableURL { url = executable.resolvingSymlinksInPath() }
        // …/debug/photosdPackageTests.xctest or …/debug/photosdPackageTests.xctest/…/binary
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.isExecutableFile(atPath: url.appendingPathComponent("photos-admin").path) { return url.path }
        }
        return packageRoot + "/.build/debug"
    }()

    static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `photos-admin arguments…` with `stdin` in `directory`.
    static func admin(_ arguments: [String], stdin: String = "", in directory: String, environment: [String: String] = [:]) throws -> Result {
        try run(binDirectory + "/photos-admin", arguments, stdin: stdin, in: directory, environment: environment)
    }

    /// Runs `bash -c line` with the binaries first on PATH.
    static func shell(_ line: String, in directory: String, environment: [String: String] = [:]) throws -> Result {
        try run("/bin/bash", ["-o", "pipefail", "-c", line], stdin: "", in: directory, environment: environment)
    }

    static func run(_ executable: String, _ arguments: [String], stdin: String, in directory: String, environment: [String: String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var env = ProcessInfo.processInfo.environment
        env["PATH"] = binDirectory + ":" + (env["PATH"] ?? "/usr/bin:/bin")
        env["PHOTOSD_AUTH_BCRYPT_COST"] = "4"
        env["USER"] = "tester"
        env.removeValue(forKey: "PHOTOS_DB")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let input = Pipe(), output = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        input.fileHandleForWriting.write(Data(stdin.utf8))
        try input.fileHandleForWriting.close()
        // Read both pipes before waiting so a chatty process cannot block on a full pipe.
        let errorData = LockedData()
        let errorReader = Thread { errorData.set(error.fileHandleForReading.readDataToEndOfFile()) }
        errorReader.start()
        let outData = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        while !errorData.isSet { usleep(1_000) }
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errorData.value, as: UTF8.self))
    }
}

/// `@unchecked Sendable`: guarded by `lock`.
final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ value: Data) { lock.lock(); data = value; lock.unlock() }
    var isSet: Bool { lock.lock(); defer { lock.unlock() }; return data != nil }
    var value: Data { lock.lock(); defer { lock.unlock() }; return data ?? Data() }
}
