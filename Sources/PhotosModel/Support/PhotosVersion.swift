/// The version of photosd and photos-admin, raised with each release (CHANGELOG.md; a test holds
/// the two together). `--version` prints it with the commit (`PhotosBuild.versionLine`).
public enum PhotosVersion {
    /// `MAJOR.MINOR.PATCH`, with `-dev` between releases.
    public static let current = "0.6.0-dev"
}
