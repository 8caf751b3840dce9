/// The version of photosd and photos-admin (`--version`), raised with each release: the
/// waves so far are 0.1 to 0.3, the fourth is under way.
public enum PhotosVersion {
    /// `MAJOR.MINOR.PATCH`, with `-dev` until the release is cut.
    public static let current = "0.4.0-dev"
}
