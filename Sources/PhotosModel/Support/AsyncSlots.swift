/// A counting semaphore for async code: `acquire` suspends (FIFO) while none is free.
public actor AsyncSlots {
    private var free: Int
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// `count` slots, all free.
    public init(count: Int) {
        free = count
    }

    /// Takes a slot, waiting (suspended, in arrival order) while none is free.
    public func acquire() async {
        if free > 0 {
            free -= 1
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    /// Gives a slot back, to the longest waiter if there is one.
    public func release() {
        if waiting.isEmpty {
            free += 1
        } else {
            // Hand the slot straight to the longest waiter.
            waiting.removeFirst().resume()
        }
    }
}
