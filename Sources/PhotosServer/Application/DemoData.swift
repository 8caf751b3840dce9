import PhotosCore
import PhotosModel

/// A few photos for a first look (`demo.seed` / `--seed-demo`), added only to an empty catalogue.
enum DemoData {
    static let photos: [NewPhoto] = [
        NewPhoto(title: "Golden Gate at dusk", priceCents: 250),
        NewPhoto(title: "Harbour in the rain", priceCents: 199),
        NewPhoto(title: "Snow, at night", priceCents: 300),
        NewPhoto(title: "Desert road", priceCents: 150),
        NewPhoto(title: "Northern lights", priceCents: 499),
    ]

    static func seed(_ catalog: CatalogService) async throws {
        guard try await catalog.list(limit: 1).isEmpty else { return }
        _ = try await catalog.importPhotos(photos, actor: .system)
    }
}
