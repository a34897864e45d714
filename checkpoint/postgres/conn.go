package postgres

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// ErrConnLost is wrapped by the error of a call that lost its connection to
// the PostgreSQL server, or could not get one: the server stopped or
// restarted, or the network failed. Nothing about the store is wrong; the
// call may be retried once the server is back (a worker does so).
var ErrConnLost = errors.New("lost the connection to the PostgreSQL server")

// connErr adds ErrConnLost to err when it is a connection failure, which
// pgx reports as what the socket said ("unexpected EOF", "connection
// reset by peer", …).
func connErr(err error) error {
	if err == nil || errors.Is(err, ErrConnLost) || !isConnErr(err) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrConnLost, err)
}

func isConnErr(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch {
		case len(pgErr.Code) == 5 && pgErr.Code[:2] == "08": // connection exception
			return true
		case pgErr.Code == "57P01", pgErr.Code == "57P02", pgErr.Code == "57P03": // shutdown, crash shutdown, cannot connect now
			return true
		}
		return false
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, net.ErrClosed)
}
