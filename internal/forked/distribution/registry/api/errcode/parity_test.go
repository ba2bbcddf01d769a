package errcode_test

// ferry's copy declares the error codes as constants with a static table of
// descriptors, registered on first use (UPSTREAM.md); upstream registers them
// at init. These tests hold the copy to the real module: the same codes, the
// same descriptors and the same lookups.

import (
	"reflect"
	"testing"

	real "github.com/distribution/distribution/v3/registry/api/errcode"

	fork "github.com/ferryhq/ferry/internal/forked/distribution/registry/api/errcode"
)

func TestParityErrorCodes(t *testing.T) {
	for _, tc := range []struct {
		fork fork.ErrorCode
		real real.ErrorCode
	}{
		{fork.ErrorCodeUnknown, real.ErrorCodeUnknown},
		{fork.ErrorCodeUnsupported, real.ErrorCodeUnsupported},
		{fork.ErrorCodeUnauthorized, real.ErrorCodeUnauthorized},
		{fork.ErrorCodeDenied, real.ErrorCodeDenied},
		{fork.ErrorCodeUnavailable, real.ErrorCodeUnavailable},
		{fork.ErrorCodeTooManyRequests, real.ErrorCodeTooManyRequests},
		{fork.ErrorCodeDigestInvalid, real.ErrorCodeDigestInvalid},
		{fork.ErrorCodeSizeInvalid, real.ErrorCodeSizeInvalid},
		{fork.ErrorCodeRangeInvalid, real.ErrorCodeRangeInvalid},
		{fork.ErrorCodeNameInvalid, real.ErrorCodeNameInvalid},
		{fork.ErrorCodeTagInvalid, real.ErrorCodeTagInvalid},
		{fork.ErrorCodeNameUnknown, real.ErrorCodeNameUnknown},
		{fork.ErrorCodeManifestUnknown, real.ErrorCodeManifestUnknown},
		{fork.ErrorCodeManifestInvalid, real.ErrorCodeManifestInvalid},
		{fork.ErrorCodeManifestUnverified, real.ErrorCodeManifestUnverified},
		{fork.ErrorCodeManifestBlobUnknown, real.ErrorCodeManifestBlobUnknown},
		{fork.ErrorCodeBlobUnknown, real.ErrorCodeBlobUnknown},
		{fork.ErrorCodeBlobUploadUnknown, real.ErrorCodeBlobUploadUnknown},
		{fork.ErrorCodeBlobUploadInvalid, real.ErrorCodeBlobUploadInvalid},
		{fork.ErrorCodePaginationNumberInvalid, real.ErrorCodePaginationNumberInvalid},
	} {
		t.Run(tc.real.String(), func(t *testing.T) {
			if int(tc.fork) != int(tc.real) {
				t.Errorf("code %d, upstream %d", tc.fork, tc.real)
			}
			if got, want := tc.fork.Descriptor(), tc.real.Descriptor(); !sameDescriptor(got, want) {
				t.Errorf("descriptor %+v, upstream %+v", got, want)
			}
			if got, want := tc.fork.Error(), tc.real.Error(); got != want {
				t.Errorf("Error() %q, upstream %q", got, want)
			}
			if got, want := fork.ParseErrorCode(tc.real.String()), real.ParseErrorCode(tc.real.String()); int(got) != int(want) {
				t.Errorf("ParseErrorCode %d, upstream %d", got, want)
			}
			var f fork.ErrorCode
			var r real.ErrorCode
			_ = f.UnmarshalText([]byte(tc.real.String()))
			_ = r.UnmarshalText([]byte(tc.real.String()))
			if int(f) != int(r) {
				t.Errorf("UnmarshalText %d, upstream %d", f, r)
			}
		})
	}
	if got, want := fork.ParseErrorCode("NOT_A_CODE"), real.ParseErrorCode("NOT_A_CODE"); int(got) != int(want) {
		t.Errorf("ParseErrorCode(unknown) %d, upstream %d", got, want)
	}
	if got, want := fork.GetGroupNames(), real.GetGroupNames(); !reflect.DeepEqual(got, want) {
		t.Errorf("groups %v, upstream %v", got, want)
	}
	f, r := fork.GetErrorAllDescriptors(), real.GetErrorAllDescriptors()
	if len(f) != len(r) {
		t.Fatalf("%d descriptors, upstream %d", len(f), len(r))
	}
	for i := range f {
		if !sameDescriptor(f[i], r[i]) {
			t.Errorf("descriptor %d: %+v, upstream %+v", i, f[i], r[i])
		}
	}
}

func sameDescriptor(f fork.ErrorDescriptor, r real.ErrorDescriptor) bool {
	return int(f.Code) == int(r.Code) && f.Value == r.Value && f.Message == r.Message &&
		f.Description == r.Description && f.HTTPStatusCode == r.HTTPStatusCode
}
