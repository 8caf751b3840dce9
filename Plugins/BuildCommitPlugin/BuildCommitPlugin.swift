import Foundation
import PackagePlugin

/// Records the commit a binary is built from (`photosd --version`, the `photosd_build_info`
/// metric): before each build, writes `BuildCommit.swift` with `git rev-parse --short=12 HEAD`
/// of the package's checkout, or `unknown` where there is no git or no checkout (a source
/// tarball). The file is rewritten only when the commit changed, so a build with nothing new
/// recompiles nothing.
@main
struct BuildCommitPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appending(path: "generated")
        return [
            .prebuildCommand(
                displayName: "Recording the commit \(target.name) is built from",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: ["-c", Self.script, "build-commit", context.package.directoryURL.path, output.appending(path: "BuildCommit.swift").path],
                outputFilesDirectory: output)
        ]
    }

    /// `$1`: the package's directory; `$2`: the file to write.
    static let script = #"""
        PATH=/usr/bin:/bin:$PATH
        commit=$(git -C "$1" rev-parse --short=12 HEAD 2> /dev/null) || commit=unknown
        text="// Generated before each build by BuildCommitPlugin: the commit this binary is built from.
        let buildCommit = \"$commit\""
        mkdir -p "$(dirname "$2")"
        if [ ! -f "$2" ] || [ "$(cat "$2")" != "$text" ]; then printf '%s\n' "$text" > "$2"; fi
        """#
}
