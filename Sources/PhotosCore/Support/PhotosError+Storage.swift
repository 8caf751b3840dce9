import DatabaseAccess
import PhotosModel

extension PhotosError {
    /// `unavailable` for a storage failure that can pass — the disk full, an I/O error, another
    /// process holding the write lock past the busy timeout, the writer's queue full, the
    /// database closing — and nil for anything else.
    public static func unavailable(from error: any Error) -> PhotosError? {
        switch error {
        case let error as any DatabaseFailure where error.isTransient:
            return PhotosError(.unavailable, "storage is unavailable (\(error.failureSummary)); nothing was saved, try again shortly")
        case is DatabaseOverloadedError:
            return PhotosError(.unavailable, "the server is overloaded; nothing was saved, try again shortly")
        case is DatabaseClosedError:
            return PhotosError(.unavailable, "the server is shutting down; try again shortly")
        default:
            return nil
        }
    }
}
