import PhotosCore
import PhotosModel

/// A few photos for a first look (`demo.seed` / `--seed-demo`), added only to an empty catalogue.
enum DemoData {
    static let photos = NewPhoto.demoCatalogue

    static func seed(_ catalog: CatalogService) async throws {
        guard try await catalog.list(limit: 1).isEmpty else { return }
        _ = try await catalog.importPhotos(photos, actor: .system)
    }
}
