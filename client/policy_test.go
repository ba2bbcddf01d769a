package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"

	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/ferryhq/ferry/client"
)

// TestIsTransient classifies the errors retries and resumes act on.
func TestIsTransient(t *testing.T) {
	resp := func(code int) error {
		return fmt.Errorf("push: %w", &errcode.ErrorResponse{Method: http.MethodPut, StatusCode: code})
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"503", resp(http.StatusServiceUnavailable), true},
		{"429", resp(http.StatusTooManyRequests), true},
		{"408", resp(http.StatusRequestTimeout), true},
		{"404", resp(http.StatusNotFound), false},
		{"400", resp(http.StatusBadRequest), false},
		{"unauthorized", &client.AuthError{Host: "h", StatusCode: http.StatusUnauthorized}, false},
		{"certificate", &client.TLSError{Host: "h", Reason: "expired"}, false},
		{"canceled", fmt.Errorf("get: %w", context.Canceled), false},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"cut short", fmt.Errorf("copy: %w", io.ErrUnexpectedEOF), true},
		{"idle timeout (a canceled read)", &client.TimeoutError{Host: "h", Waiting: "data", Err: context.Canceled}, true},
		{"server closed idle connection", errors.New("Put \"http://h/v2/\": http: server closed idle connection"), true},
		{"other", errors.New("manifest invalid"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := client.IsTransient(tt.err); got != tt.want {
				t.Errorf("IsTransient(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}
