@testable import PostgresStore
import Testing

@Suite("? placeholders rewritten for PostgreSQL")
struct PostgresPlaceholderTests {
    @Test("plain ? are numbered in order, ?N keep their number, quoted text and comments are left alone")
    func rewrite() {
        #expect(PostgresPlaceholders.number("SELECT 1") == "SELECT 1")
        #expect(PostgresPlaceholders.number("SELECT a FROM t WHERE a = ? AND b > ? LIMIT ?") == "SELECT a FROM t WHERE a = $1 AND b > $2 LIMIT $3")
        #expect(PostgresPlaceholders.number("WHERE id > ?1 AND id <= ?2 AND x = ?1") == "WHERE id > $1 AND id <= $2 AND x = $1")
        #expect(PostgresPlaceholders.number("WHERE a = '?' AND b = \"?\" AND c = ? -- why?\nAND d = ?") == "WHERE a = '?' AND b = \"?\" AND c = $1 -- why?\nAND d = $2")
        #expect(PostgresPlaceholders.number("VALUES ('it''s ?', ?)") == "VALUES ('it''s ?', $1)")
    }
}
