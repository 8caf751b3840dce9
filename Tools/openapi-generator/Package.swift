// swift-tools-version: 6.0
// Builds Apple's swift-openapi-generator for scripts/generate-client, which regenerates
// Sources/PhotosClient/Generated from docs/openapi.yaml. Kept out of the main package so that
// building photosd never builds the generator (the generated code is committed).
import PackageDescription

let package = Package(
    name: "openapi-generator",
    dependencies: [
        .package(url: "https://github.com/apple/swift-openapi-generator", exact: "1.14.3"),
    ],
    targets: []
)
