import Foundation

/// A log client's side of C2SP tlog-witness: the body of `POST <witness>/add-checkpoint` and the
/// reading of its answers (photosd asking `audit.witnesses`).
public enum AddCheckpointRequest {
    /// `old <size>`, the consistency proof from that size to the checkpoint's (base64, one hash
    /// per line), an empty line, then the checkpoint's signed note.
    public static func body(oldSize: Int64, proof: [MerkleTree.Hash], note: String) -> String {
        "old \(oldSize)\n" + proof.map { Data($0).base64EncodedString() + "\n" }.joined() + "\n" + note
    }

    /// The signature lines of a 200 answer's body that are `witness`'s (its name and key id),
    /// each with its newline; the body may carry lines of other keys, which are left out.
    public static func cosignatureLines(in body: String, of witness: CosignerKey) -> [String] {
        body.split(separator: "\n").compactMap { line in
            guard !line.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }),
                  let signature = SignedNote.Signature(line: line),
                  signature.keyName == witness.name, signature.keyID == witness.keyID else { return nil }
            return String(line) + "\n"
        }
    }

    /// The witness's size for the log in a 409 answer's `text/x.tlog.size` body (one decimal
    /// number and a newline); nil for anything else.
    public static func conflictSize(in body: String) -> Int64? {
        let text = body.hasSuffix("\n") ? String(body.dropLast()) : body
        guard let size = Int64(text), size >= 0, String(size) == text else { return nil }
        return size
    }
}
