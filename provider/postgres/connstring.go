package postgres

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrInvalidConnString is Open's error for a connection string that can never
// work: it does not parse, names another scheme or carries a bad option.
// Retrying cannot fix it; only a corrected string can.
var ErrInvalidConnString = errors.New("invalid connection string")

// acceptedForms names what Open accepts, for errors about anything else.
const acceptedForms = "use a postgres:// or postgresql:// URL or keyword/value settings such as host=... dbname=..."

var (
	urlScheme    = regexp.MustCompile(`^\s*([A-Za-z][A-Za-z0-9+.-]*)://`)
	keywordStart = regexp.MustCompile(`^\s*[A-Za-z_][A-Za-z0-9_]*\s*=`)
)

// IsConnString reports whether s is meant for PostgreSQL rather than naming a
// file: a URL whose scheme is postgres, postgresql or pg in any letter case
// (Open refuses pg://, naming the accepted forms), or libpq keyword/value
// settings, which start with a keyword and "=".
func IsConnString(s string) bool {
	if scheme, _, ok := cutScheme(s); ok {
		return isPostgresScheme(scheme) || strings.EqualFold(scheme, "pg")
	}
	return keywordStart.MatchString(s)
}

// cutScheme splits a URL into its scheme and what follows "://".
func cutScheme(s string) (scheme, rest string, ok bool) {
	m := urlScheme.FindStringSubmatch(s)
	if m == nil {
		return "", s, false
	}
	return m[1], s[len(m[0]):], true
}

// isPostgresScheme is case-insensitive: URL schemes are (RFC 3986), though
// pgx reads only the lower-case spellings as URLs.
func isPostgresScheme(scheme string) bool {
	return strings.EqualFold(scheme, "postgres") || strings.EqualFold(scheme, "postgresql")
}

// parseConnString parses s as pgx does, after lower-casing its URL scheme.
// Its errors wrap ErrInvalidConnString and never contain s.
func parseConnString(s string) (*pgxpool.Config, error) {
	if scheme, rest, ok := cutScheme(s); ok {
		if !isPostgresScheme(scheme) {
			return nil, fmt.Errorf("%w: unsupported scheme %q: %s", ErrInvalidConnString, scheme, acceptedForms)
		}
		s = strings.ToLower(scheme) + "://" + rest
	}
	cfg, err := pgxpool.ParseConfig(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrInvalidConnString, parseCause(err))
	}
	return cfg, nil
}

// parseCause is pgx's description of a parse failure without the string it
// quotes. A detail that quotes anything is left out: pgx quotes fragments of
// the string there, and a fragment of a malformed string can be a password.
func parseCause(err error) string {
	var pce *pgconn.ParseConfigError
	if !errors.As(err, &pce) {
		return acceptedForms
	}
	text := pce.Error()
	detail := errors.Unwrap(pce)
	if detail != nil {
		text = strings.TrimSuffix(text, " ("+detail.Error()+")")
	}
	i := strings.LastIndex(text, "`: ")
	if i < 0 {
		return acceptedForms
	}
	cause := text[i+len("`: "):]
	if detail != nil && !strings.Contains(detail.Error(), `"`) {
		cause += " (" + detail.Error() + ")"
	}
	return cause
}

// passwordMask replaces every password RedactConnString finds.
const passwordMask = "xxxxx"

// RedactConnString returns s with its passwords masked, for errors and logs
// that must name a store: a URL's userinfo password (any scheme), password
// and sslpassword query parameters, and password and sslpassword keyword
// values. Anything else, such as a file path, comes back unchanged.
func RedactConnString(s string) string {
	if scheme, rest, ok := cutScheme(s); ok {
		return scheme + "://" + redactURL(rest)
	}
	return redactKeywords(s)
}

// redactURL masks the password of a URL's userinfo and its password
// parameters.
func redactURL(rest string) string {
	var b strings.Builder
	if user, hasPassword, after, ok := cutUserinfo(rest); ok {
		b.WriteString(user)
		if hasPassword {
			b.WriteString(":" + passwordMask)
		}
		b.WriteByte('@')
		rest = after
	}
	target, query, hasQuery := strings.Cut(rest, "?")
	b.WriteString(target)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(redactQuery(query))
	}
	return b.String()
}

// cutUserinfo splits the user and what follows the userinfo from the part
// of a URL after "://". A password ends at the last "@": an unencoded "/",
// "?" or "@" in a malformed password then cannot leak, and an "@" in a
// parameter value only masks more than needed. Without a password, the
// userinfo is what precedes an "@" that comes before any "/" or "?".
func cutUserinfo(rest string) (user string, hasPassword bool, after string, ok bool) {
	at := strings.LastIndexByte(rest, '@')
	if at < 0 {
		return "", false, rest, false
	}
	if user, _, hasPassword := strings.Cut(rest[:at], ":"); hasPassword {
		return user, true, rest[at+1:], true
	}
	end := strings.IndexAny(rest, "@/?")
	if rest[end] != '@' {
		return "", false, rest, false
	}
	return rest[:end], false, rest[end+1:], true
}

// redactQuery masks the values of password parameters, however their names
// are spelled or percent-encoded.
func redactQuery(query string) string {
	pairs := strings.Split(query, "&")
	for i, pair := range pairs {
		rawKey, _, hasValue := strings.Cut(pair, "=")
		key := rawKey
		if decoded, err := url.PathUnescape(rawKey); err == nil {
			key = strings.TrimSpace(decoded)
		}
		if hasValue && isPasswordKey(key) {
			pairs[i] = rawKey + "=" + passwordMask
		}
	}
	return strings.Join(pairs, "&")
}

// redactKeywords masks password values in libpq keyword/value settings,
// reading values as libpq does: up to unescaped white space, or between
// single quotes with backslash escapes. An unterminated quote masks the rest.
// Other values may hold password parameters ("file.db?mode=ro&password=").
func redactKeywords(s string) string {
	var b strings.Builder
	for {
		eq := strings.IndexByte(s, '=')
		if eq < 0 {
			b.WriteString(s)
			return b.String()
		}
		key := keywordBefore(strings.TrimRight(s[:eq], spaces))
		b.WriteString(s[:eq+1])
		s = s[eq+1:]
		start := len(s) - len(strings.TrimLeft(s, spaces))
		end := start + valueLen(s[start:])
		b.WriteString(s[:start])
		if isPasswordKey(key) {
			b.WriteString(passwordMask)
		} else {
			b.WriteString(redactQuery(s[start:end]))
		}
		s = s[end:]
	}
}

// spaces are the white space libpq separates settings with.
const spaces = " \t\n\r\v\f"

// valueLen is the length of the keyword value s starts with, quotes included.
func valueLen(s string) int {
	quoted := strings.HasPrefix(s, "'")
	i := 0
	if quoted {
		i++
	}
	for ; i < len(s); i++ {
		switch {
		case s[i] == '\\':
			i++
		case quoted && s[i] == '\'':
			return i + 1
		case !quoted && strings.IndexByte(spaces, s[i]) >= 0:
			return i
		}
	}
	return len(s)
}

// keywordBefore is the keyword ending s, the text before an "=": the run of
// letters, digits and underscores at its end. Reading no more than that
// also catches a password parameter in a file path ("store.db?password=").
func keywordBefore(s string) string {
	start := len(s)
	for start > 0 && isKeywordByte(s[start-1]) {
		start--
	}
	return s[start:]
}

func isKeywordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func isPasswordKey(key string) bool {
	return strings.EqualFold(key, "password") || strings.EqualFold(key, "sslpassword")
}

// redact drops the user and database pgx puts in connection errors, keeping
// the cause and the server's address (the password never appears).
func redact(err error) error {
	var connErr *pgconn.ConnectError
	if errors.As(err, &connErr) {
		return fmt.Errorf("cannot connect to the database: %w", distinct(errors.Unwrap(connErr)))
	}
	return err
}

// distinct is err with repeated causes of a joined error said once: pgx
// joins one error per attempt, and its attempts (with and without TLS, say)
// often fail alike.
func distinct(err error) error {
	joined, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return err
	}
	var kept []error
	seen := map[string]bool{}
	for _, e := range joined.Unwrap() {
		if msg := e.Error(); !seen[msg] {
			seen[msg] = true
			kept = append(kept, e)
		}
	}
	if len(kept) == 1 {
		return kept[0]
	}
	return errors.Join(kept...)
}
