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
        #expect(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: seconds)) == expected)
    }
}

@Suite("ISO8601Timestamp: what it cannot represent")
struct TimestampRangeTests {
    @Test("parse takes a day, a second or a millisecond in UTC", arguments: [
        ("2026-11-23", 1_795_392_000.0),
        ("2026-11-23T10:00:00Z", 1_795_428_000.0),
        ("2026-11-23T10:00:00.250Z", 1_795_428_000.25),
        ("1970-01-01", 0.0),
        ("2000-02-29T00:00:00.007Z", 951_782_400.007),
        ("9999-12-31T23:59:59.999Z", 253_402_300_799.999),
    ])
    func parses(text: String, seconds: Double) throws {
        let date = try #require(ISO8601Timestamp.parse(text), "\(text)")
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.0005, "\(text): \(date.timeIntervalSince1970)")
    }

    @Test("parse refuses what the form cannot say and what is no date", arguments: [
        "0000-01-01", "1969-12-31", "1969-12-31T23:59:59.500Z", "10000-01-01", "-001-01-01", "2026-02-29", "2026-13-01",
        "2026-00-10", "2026-11-31", "2026-11-23T24:00:00Z", "2026-11-23T10:60:00Z", "2026-11-23T10:00:60Z", "2026-11-23T10:00:00",
        "2026-11-23T10:00:00+01:00", "2026-11-23 10:00:00Z", "2026-1-23", "２０２６-11-23", "", "abc", "2026-11-23T10:00:00.5Z",
    ])
    func refuses(text: String) {
        #expect(ISO8601Timestamp.parse(text) == nil, "\(text)")
    }

    @Test("parse and string agree on every day boundary they share")
    func roundTrip() throws {
        for seconds in stride(from: 0.0, through: 253_402_300_799.0, by: 86_400 * 97.3) {
            let text = ISO8601Timestamp.string(from: Date(timeIntervalSince1970: seconds.rounded(.down)))
            let parsed = try #require(ISO8601Timestamp.parse(text))
            #expect(ISO8601Timestamp.string(from: parsed) == text)
            #expect(ISO8601Timestamp.date(from: text) == parsed)
        }
    }

    @Test("string clamps a time the form cannot say instead of crashing", arguments: [
        (-1.0, "1970-01-01T00:00:00.000Z"), (-62_167_219_200.0, "1970-01-01T00:00:00.000Z"),
        (-0.5, "1970-01-01T00:00:00.000Z"), (1e15, "9999-12-31T23:59:59.999Z"), (Double.nan, "1970-01-01T00:00:00.000Z"),
    ])
    func clamps(seconds: Double, expected: String) {
        #expect(ISO8601Timestamp.string(from: Date(timeIntervalSince1970: seconds)) == expected)
    }
}
