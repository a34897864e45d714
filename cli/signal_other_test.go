//go:build !unix

package cli_test

import "os"

var sigterm = os.Kill
