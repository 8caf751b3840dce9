import Foundation
import PhotosModel

extension AuditReceipt {
    /// The fields a receipt, its rows and its inclusion proof may have: anything else is refused,
    /// so that no reader is shown a field no check covered.
    static let receiptFields: Set<String> = ["sessionId", "previousHash", "rows", "inclusion", "checkpoint"]
    static let inclusionFields: Set<String> = ["logIndex", "treeSize", "hashes"]

    /// Reads a receipt as `check-receipt` must: strict JSON (no key twice in any object: parsers
    /// disagree on which of two they keep), no field beyond the receipt's own, then decoded.
    /// Throws a `Problem` at step `format`.
    public static func decodeStrictly(_ data: Data) throws -> AuditReceipt {
        func fail(_ reason: String) -> Problem { Problem(step: "format", reason: reason) }
        do {
            try StrictJSON.check(data)
        } catch let problem as StrictJSON.Problem {
            throw fail("not one reading of JSON: \(problem)")
        }
        guard let top = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { throw fail("not a JSON object") }
        if let extra = Set(top.keys).subtracting(receiptFields).sorted().first { throw fail("an unknown field \"\(extra)\" in the receipt") }
        if let inclusion = top["inclusion"] as? [String: Any], let extra = Set(inclusion.keys).subtracting(inclusionFields).sorted().first {
            throw fail("an unknown field \"\(extra)\" in inclusion")
        }
        // Integers as digits only: 1.0 and 1e0 are refused, as a verifier in a language whose JSON
        // keeps them floats would refuse them.
        func integer(_ value: Any?, _ name: String, atLeast minimum: Int64 = .min) throws {
            guard let value, !(value is NSNull) else { return }
            // JSONSerialization's numbers say how they were written: `i`/`q` digits, `d` a fraction
            // or exponent; `true`/`false` are `c` (and `is Bool` holds for 0 and 1 too).
            guard let number = value as? NSNumber, ["i", "q", "l", "s"].contains(String(cString: number.objCType)) else {
                throw fail("\(name) is not an integer written as digits (within 64 bits)")
            }
            guard number.int64Value >= minimum else { throw fail("\(name) is \(number.int64Value), below \(minimum)") }
        }
        if let inclusion = top["inclusion"] as? [String: Any] {
            try integer(inclusion["logIndex"], "inclusion.logIndex")
            try integer(inclusion["treeSize"], "inclusion.treeSize")
        }
        for (offset, row) in (top["rows"] as? [Any] ?? []).enumerated() {
            guard let row = row as? [String: Any] else { throw fail("row \(offset + 1) is not an object") }
            try integer(row["seq"], "row \(offset + 1)'s seq", atLeast: 1)
            try integer(row["userId"], "row \(offset + 1)'s userId")
            let allowed = row["redacted"] == nil ? Row.contentKeys : Row.redactedKeys
            if let extra = Set(row.keys).subtracting(allowed).sorted().first {
                throw fail(row["redacted"] == nil
                    ? "an unknown field \"\(extra)\" in row \(offset + 1): a row holds only what its hash covers"
                    : "row \(offset + 1) is redacted and shows \"\(extra)\": a redacted row's hash proves none of its fields, it shows only seq and hash")
            }
            if let missing = Row.contentKeys.subtracting(row.keys).sorted().first, row["redacted"] == nil {
                throw fail("row \(offset + 1) lacks \"\(missing)\": every field its hash covers is present (null where the row has none)")
            }
        }
        do {
            return try JSONDecoder().decode(AuditReceipt.self, from: data)
        } catch {
            throw fail("not a receipt: \(error)")
        }
    }
}
