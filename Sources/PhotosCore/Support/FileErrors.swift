import Foundation

/// Foundation's file and JSON errors in a few plain words, for the one line a tool prints:
/// "permission denied", not "Error Domain=NSCocoaErrorDomain Code=513 …".
public enum FileErrors {
    /// Why a file operation failed: the operating system's reason (`strerror`) when Foundation
    /// names one, else a short phrase for Foundation's code.
    public static func reason(_ error: any Error) -> String {
        let error = error as NSError
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return lowercasedFirst(String(cString: strerror(Int32(underlying.code))))
        }
        if error.domain == NSPOSIXErrorDomain { return lowercasedFirst(String(cString: strerror(Int32(error.code)))) }
        guard error.domain == NSCocoaErrorDomain else { return "\(error.localizedDescription)" }
        switch CocoaError.Code(rawValue: error.code) {
        case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file or directory"
        case .fileReadNoPermission, .fileWriteNoPermission: return "permission denied"
        case .fileWriteOutOfSpace: return "no space left on device"
        case .fileWriteVolumeReadOnly: return "read-only file system"
        case .fileWriteFileExists: return "file exists"
        case .fileReadCorruptFile, .propertyListReadCorrupt: return "not in the expected format"
        case .fileReadInapplicableStringEncoding, .fileWriteInapplicableStringEncoding: return "not valid UTF-8"
        default: return "file error \(error.code)"
        }
    }

    /// Where JSON stopped parsing ("around line 3, column 7"), when Foundation says.
    public static func jsonPosition(_ error: any Error) -> String? {
        let text = "\((error as NSError).userInfo[NSDebugDescriptionErrorKey] ?? "")"
        return text.firstMatch(of: /around (line \d+, column \d+|character \d+)/).map { String($0.output.0) }
    }

    private static func lowercasedFirst(_ text: String) -> String {
        text.prefix(1).lowercased() + text.dropFirst()
    }
}
