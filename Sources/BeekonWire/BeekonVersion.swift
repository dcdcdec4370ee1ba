/// The one version of this repository's products: the SDK's `sdk_version` in every
/// upload, `beekon --version` and `beekon-ingest --version`. Semantic versioning; bump it
/// (and CHANGELOG.md) as CONTRIBUTING.md's release steps say.
public enum BeekonVersion {
    /// The current release, `MAJOR.MINOR.PATCH`.
    public static let current = "0.2.0"
}
