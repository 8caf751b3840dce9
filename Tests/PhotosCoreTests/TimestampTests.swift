import Foundation
import PhotosCore
import PhotosModel
import Testing

@Suite("ISO8601Timestamp")
struct TimestampTests {
    @Test("UTC with milliseconds, zero-padded", arguments: [
        (0.0, "1970-01-01T00:00:00.000Z"),
        (1_800_000_000.5, "2027-01-15T08:00:00.500Z"),
        (951_782_400.007, "2000-02-29T00:00:00.007Z"),
        (253_402_300_799.999, "9999-12-31T23:59:59.999Z"),
    ])
    func format(seconds: Double, expected: String) {
        #expect(try ISO8601Timestamp.string(from: Date(timeIntervalSince1970: seconds)) == expected)
    }
}
