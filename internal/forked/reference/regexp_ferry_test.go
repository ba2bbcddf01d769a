package reference

import "testing"

// TestPatternsAsUpstreamBuilds holds the constant patterns of the copy's
// regexp.go (ferry's patch) to the expressions upstream's regexp.go builds
// with optional, anyTimes, capture and anchored at start-up.
func TestPatternsAsUpstreamBuilds(t *testing.T) {
	for _, tc := range []struct{ name, got, want string }{
		{"domainName", domainName, domainNameComponent + anyTimes(`\.`+domainNameComponent)},
		{"host", host, `(?:` + domainName + `|` + ipv6address + `)`},
		{"domainAndPort", domainAndPort, host + optionalPort},
		{"pathComponent", pathComponent, alphanumeric + anyTimes(separator+alphanumeric)},
		{"remoteName", remoteName, pathComponent + anyTimes(`/`+pathComponent)},
		{"namePat", namePat, optional(domainAndPort+`/`) + remoteName},
		{"referencePat", referencePat, anchored(capture(namePat), optional(`:`, capture(tag)), optional(`@`, capture(digestPat)))},
		{"anchoredTagRegexp", anchoredTagRegexp.String(), anchored(tag)},
		{"anchoredDigestRegexp", anchoredDigestRegexp.String(), anchored(digestPat)},
		{"anchoredNameRegexp", anchoredNameRegexp.String(), anchored(optional(capture(domainAndPort), `/`), capture(remoteName))},
		{"anchoredIdentifierRegexp", anchoredIdentifierRegexp.String(), anchored(identifier)},
	} {
		if tc.got != tc.want {
			t.Errorf("%s = %q, upstream builds %q", tc.name, tc.got, tc.want)
		}
	}
}
