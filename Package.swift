// swift-tools-version: 6.2
import PackageDescription

let package = Package(
    name: "photosd",
    // macOS 15 is the server's floor (its packages need it); iOS 16 is the client's (the
    // server never builds for iOS).
    platforms: [.macOS(.v15), .iOS(.v16)],
    products: [
        .executable(name: "photosd", targets: ["photosd"]),
        .executable(name: "photos-admin", targets: ["photos-admin"]),
        .executable(name: "photos-bench", targets: ["photos-bench"]),
        .executable(name: "photos-bench-peer", targets: ["photos-bench-peer"]),
        .library(name: "PhotosCore", targets: ["PhotosCore"]),
        // For app teams: the generated API client and the NavigationDriver (docs: README).
        .library(name: "PhotosClient", targets: ["PhotosClient"]),
        // For app teams' tests and previews: a fake photosd in memory (docs/client.md).
        .library(name: "PhotosClientTesting", targets: ["PhotosClientTesting"]),
        .executable(name: "photos-app", targets: ["photos-app"]),
    ],
    // An app that needs only PhotosClient depends on this package with `traits: []`: every
    // dependency but the client's three is used under the `Server` trait only (see the end of
    // this file), so SwiftPM leaves them out of the app's resolution (docs/client.md).
    traits: [
        .trait(
            name: "Server",
            description: "Everything but the PhotosClient library: photosd, photos-admin, photos-app, photos-bench and the tests."
        ),
        .default(enabledTraits: ["Server"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-configuration", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.5.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth", from: "2.5.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache", from: "2.1.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.81.0"),
        // TLS to PostgreSQL (database.sslMode): the TLSConfiguration postgres-nio takes.
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.29.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.0"),
        .package(url: "https://github.com/apple/swift-openapi-urlsession", from: "1.4.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.1.0"),
        // Traces by OTLP/HTTP only (the gRPC exporter's packages stay out of the build).
        .package(url: "https://github.com/swift-otel/swift-otel", from: "1.6.0", traits: ["OTLPHTTP"]),
        // photosd's requests to witnesses (audit.witnesses); swift-otel's OTLP/HTTP exporter uses it too.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.25.0"),
    ],
    targets: [
        // The system's libsqlite3, used directly (no ORM, no bundled copy).
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // Linux's epoll for photos-bench's load generator (a header only, nothing to link).
        .systemLibrary(name: "CEpoll"),
        // What both stores' migrators share: the migration type, its checksum, the refusals.
        .target(
            name: "SchemaMigrations",
            dependencies: [.product(name: "Crypto", package: "swift-crypto")]
        ),
        // What services see of either store: the connection and store protocols, values, rows.
        .target(name: "DatabaseAccess", dependencies: ["PhotosModel"]),
        .target(
            name: "SQLiteStore",
            dependencies: ["CSQLite", "DatabaseAccess", "PhotosModel", "SchemaMigrations"]
        ),
        // The PostgreSQL store over postgres-nio: where a database is, its migrator, the store.
        .target(
            name: "PostgresStore",
            dependencies: [
                "DatabaseAccess",
                "SchemaMigrations",
                "PhotosModel",  // JSONBuilder: the rows an action writes, bound as one JSON value
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "_ConnectionPoolModule", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The pure model: errors, JSON, users and photos, audit steps and the chain's hash, the
        // catalogue's rules. No storage, no I/O, and no package (its one hash, SHA-256, is its
        // own: PhotosClientTesting runs it in an app's tests, which resolve the client's only).
        .target(name: "PhotosModel"),
        // The audit trail: its writer and chain, checkpoints and signing keys, the verifier, the
        // archiver and erasure's redaction rules. Written against DatabaseAccess; no services.
        .target(
            name: "AuditTrail",
            dependencies: [
                "PhotosModel",
                "DatabaseAccess",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // Services, analytics, configuration: written once against DatabaseAccess, with no store
        // of their own.
        .target(
            name: "PhotosCore",
            dependencies: [
                "PhotosModel",
                "AuditTrail",
                "DatabaseAccess",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        // Where a database is opened (SQLite or PostgreSQL), migrated, copied, checked and backed
        // up: the composition root of storage, the one place above the stores that names them.
        .target(
            name: "PhotosStorage",
            dependencies: [
                "PhotosCore", "AuditTrail",
                "PhotosModel",
                "DatabaseAccess",
                "SchemaMigrations",
                "SQLiteStore",
                "PostgresStore",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // The navigation core, pure: (state, action, facts) → new state, audit steps, effects.
        // It imports no storage module.
        .target(
            name: "Navigation",
            dependencies: ["PhotosModel"]
        ),
        // Sessions over a database: reads the state and the facts, runs the navigation core,
        // writes what it decided (the thin layer between the core and the stores).
        .target(
            name: "Sessions",
            dependencies: [
                "Navigation",
                "PhotosModel",
                "PhotosCore", "AuditTrail",
                "DatabaseAccess",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        // What every listener photosd opens shares: the connection guard (request deadline,
        // body limit, malformed and HTTP/1.0 requests, path normalisation), the idle timeout and
        // the cap on open connections.
        .target(
            name: "PhotosListener",
            dependencies: [
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // The operator console: server-rendered pages on a listener of their own.
        .target(
            name: "PhotosConsole",
            dependencies: [
                "PhotosModel",
                "PhotosCore", "AuditTrail",
                "Navigation",
                "Sessions",
                "DatabaseAccess",
                "PhotosListener",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // Embedded by scripts/embed-console-assets (EmbeddedAssets.swift).
            exclude: ["Templates", "Assets"]
        ),
        .target(
            name: "PhotosServer",
            dependencies: [
                "PhotosModel",
                "PhotosCore", "AuditTrail", "PhotosStorage", "PhotosConsole", "PhotosListener", "PhotosBuildInfo",
                "Navigation",
                "Sessions",
                "DatabaseAccess",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationEssentialsCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "OTel", package: "swift-otel"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
            ]
        ),
        .executableTarget(
            name: "photosd",
            dependencies: [
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                "PhotosServer", "PhotosListener",
                "PhotosModel", "PhotosBuildInfo",
                "PhotosCore", "AuditTrail", "PhotosStorage",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .executableTarget(
            name: "photos-admin",
            dependencies: [
                "PhotosCore", "AuditTrail", "PhotosStorage", "PhotosBuildInfo",
                "PostgresStore", "PhotosListener",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                "SQLiteStore",
                "PhotosModel",
                "Navigation",
                "Sessions",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The client app teams build on: the HTTP layer generated from docs/openapi.yaml by
        // swift-openapi-generator (committed: scripts/generate-client), over URLSession, and the
        // NavigationDriver that turns each answer into NavigationCommands. Depends on nothing of
        // the server.
        .target(
            name: "PhotosClient",
            dependencies: [
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            exclude: ["openapi-generator-config.yaml", "Generated/GENERATED-FROM"]
        ),
        // A fake photosd for an app's own tests and previews: a ClientTransport that runs the
        // server's navigation core (Navigation, PhotosModel: no packages of their own) in memory.
        .target(
            name: "PhotosClientTesting",
            dependencies: [
                "PhotosClient", "Navigation", "PhotosModel",
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ]
        ),
        // A terminal app on PhotosClient only.
        .executableTarget(
            name: "photos-app",
            dependencies: ["PhotosClient", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The version and the commit a binary is built from (`--version`, `photosd_build_info`).
        .target(name: "PhotosBuildInfo", dependencies: ["PhotosModel"], plugins: ["BuildCommitPlugin"]),
        .plugin(name: "BuildCommitPlugin", capability: .buildTool()),
        // Starts a real photosd child process: the end-to-end tests and photos-bench.
        .target(name: "PhotosdProcess", dependencies: ["CSpawn"]),
        // posix_spawn with glibc's chdir and closefrom file actions (for PhotosdProcess's ChildProcess).
        .target(name: "CSpawn"),
        // A fault-injecting SQLite VFS (power cuts, failing writes and syncs), for tests only.
        .target(
            name: "CFaultVFS",
            dependencies: ["CSQLite"],
            path: "Tests/CFaultVFS"
        ),
        // Helpers shared by the test targets: temporary directories, migrated test databases.
        .target(
            name: "PhotosTestSupport",
            dependencies: [
                "CFaultVFS", "PhotosModel", "PhotosCore", "AuditTrail", "PhotosStorage", "SQLiteStore", "PostgresStore", "Navigation", "Sessions", "PhotosdProcess",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/PhotosTestSupport"
        ),
        .executableTarget(
            name: "photos-bench",
            dependencies: [
                "CEpoll",
                "PhotosModel",
                "Navigation", "PhotosClientTesting",  // `core`: the navigation core alone, in memory
                "PhotosCore", "AuditTrail", "PhotosStorage",
                "PhotosdProcess",
                "PostgresStore",
                "SQLiteStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ]
        ),
        // The raw peer photosd is measured against (scripts/bench-peer): Hummingbird and SQLite
        // or PostgreSQL (postgres-nio), one transaction per request.
        .executableTarget(
            name: "photos-bench-peer",
            dependencies: [
                "CSQLite", .product(name: "Hummingbird", package: "hummingbird"), .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .testTarget(
            name: "SQLiteStoreTests",
            dependencies: ["SQLiteStore", "SchemaMigrations", "DatabaseAccess", "CSQLite", "PhotosTestSupport"]
        ),
        .testTarget(
            name: "PostgresStoreTests",
            dependencies: ["PostgresStore", "PhotosModel", "PhotosCore", "AuditTrail", "PhotosStorage", "PhotosTestSupport", "SQLiteStore"]
        ),
        .testTarget(
            name: "PhotosCoreTests",
            dependencies: [
                "PhotosModel", "PhotosCore", "AuditTrail", "PhotosStorage", "SQLiteStore", "PhotosTestSupport", "Navigation", "Sessions",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "AuditTrailTests",
            dependencies: [
                "AuditTrail", "PhotosModel", "PhotosCore", "PhotosStorage", "SQLiteStore", "PhotosTestSupport", "Navigation", "Sessions",
                "DatabaseAccess",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "NavigationTests",
            dependencies: [
                "Navigation", "Sessions", "PhotosModel", "PhotosCore", "AuditTrail", "PhotosStorage", "SQLiteStore", "PhotosTestSupport", "SchemaMigrations",
                "PhotosClientTesting",
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "PhotosServerTests",
            dependencies: [
                "PhotosConsole", "PhotosListener",
                "PhotosServer", "PhotosModel", "PhotosCore", "AuditTrail", "PhotosStorage", "Navigation", "Sessions", "SQLiteStore", "PhotosTestSupport", "PhotosdProcess",
                "PostgresStore",
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "PhotosClientTests",
            dependencies: [
                "PhotosClient", "PhotosClientTesting", "PhotosTestSupport", "PhotosdProcess",
                .product(name: "OpenAPIURLSession", package: "swift-openapi-urlsession"),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "PhotosAdminTests",
            dependencies: ["PhotosBuildInfo", "PhotosModel", "PhotosCore", "AuditTrail", "PhotosStorage", "SQLiteStore", "Navigation", "Sessions", "PhotosTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// Every module names what it uses: a member of a module that a file does not import is an
// error, so the layering (services see `DatabaseAccess`, never a store) stays true.
for target in package.targets where target.type != .system && target.type != .plugin {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("MemberImportVisibility")]
}

// An `async` function runs on its caller's executor unless it says `@concurrent`: a database
// transaction's closure and every statement it awaits stay on SQLite's writer (or reader)
// thread, where the store runs them, instead of hopping to the global pool and back per
// statement (docs/storage.md, "Transactions"). The client package and its terminal app are left
// as app teams know Swift's default.
let clientTargets: Set<String> = ["PhotosClient", "PhotosClientTesting", "photos-app", "PhotosClientTests"]
for target in package.targets where target.type != .system && target.type != .plugin && !clientTargets.contains(target.name) {
    target.swiftSettings = (target.swiftSettings ?? []) + [.enableUpcomingFeature("NonisolatedNonsendingByDefault")]
}

// What an app that uses only PhotosClient resolves: these three packages (and theirs). Every
// other package is used under the `Server` trait only, so that an app depending on this package
// with `traits: []` does not fetch it, nor meet its version constraints (it may use swift-crypto
// 4 while the server uses 3). The client's packages stay unconditional everywhere: SwiftPM
// drops a package some of whose uses are guarded even where others are not (swiftlang/
// swift-package-manager#8398). `ClientPackageTests` builds such an app and counts what it resolved.
let clientPackages: Set<String> = ["swift-openapi-runtime", "swift-openapi-urlsession", "swift-http-types"]
for target in package.targets where target.name != "PhotosClient" {
    target.dependencies = target.dependencies.map { dependency in
        guard case .productItem(let name, let package?, let aliases, nil) = dependency, !clientPackages.contains(package) else {
            return dependency
        }
        return .product(name: name, package: package, moduleAliases: aliases, condition: .when(traits: ["Server"]))
    }
}
