// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "photosd",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "photos-admin", targets: ["photos-admin"]),
        .library(name: "PhotosCore", targets: ["PhotosCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
    ],
    targets: [
        // The system's libsqlite3, used directly (no ORM, no bundled copy).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(
            name: "SQLiteStore",
            dependencies: [
                "CSQLite",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "PhotosCore",
            dependencies: [
                "SQLiteStore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .target(
            name: "Navigation",
            dependencies: [
                "PhotosCore",
                "SQLiteStore",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .executableTarget(
            name: "photos-admin",
            dependencies: [
                "PhotosCore",
                "SQLiteStore",
                "Navigation",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // Helpers shared by the test targets: temporary directories, migrated test databases.
        .target(
            name: "PhotosTestSupport",
            dependencies: ["PhotosCore", "SQLiteStore"],
            path: "Tests/PhotosTestSupport"
        ),
        .testTarget(
            name: "SQLiteStoreTests",
            dependencies: ["SQLiteStore", "CSQLite", "PhotosTestSupport"]
        ),
        .testTarget(
            name: "PhotosCoreTests",
            dependencies: ["PhotosCore", "SQLiteStore", "PhotosTestSupport"]
        ),
        .testTarget(
            name: "NavigationTests",
            dependencies: ["Navigation", "PhotosCore", "SQLiteStore", "PhotosTestSupport"]
        ),
        .testTarget(
            name: "PhotosAdminTests",
            dependencies: ["PhotosCore", "SQLiteStore", "Navigation", "PhotosTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
