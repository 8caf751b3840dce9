import PhotosModel

/// What this binary is: its version and the commit it was built from (recorded by
/// `BuildCommitPlugin` before each build; `unknown` when built outside a git checkout).
public enum PhotosBuild {
    /// The commit, 12 hex digits, or `unknown`.
    public static let commit = buildCommit

    /// What `--version` prints: `0.5.0 (3f2a9c1b7d04)`.
    public static var versionLine: String { "\(PhotosVersion.current) (\(commit))" }
}
