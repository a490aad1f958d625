package repl

// helpText is what HELP prints: every statement and shell command, one line each.
const helpText = `Statements (end each with ';'; a statement may span lines):
  SET 'key' = 'value'               set a session property (SET alone lists them)
  RESET ['key']                     reset one or all session properties
  CREATE TABLE t (...) WITH (...)   declare a table over a connector
  CREATE TEMPORARY VIEW v AS q      declare a view
  DROP TABLE t / DROP VIEW v        remove a table or view
  CREATE TABLE t2 WITH (...) LIKE t  a table like another (INCLUDING/EXCLUDING/OVERWRITING ...)
  ALTER TABLE t SET ('k' = 'v')     change a table's options (RESET ('k') removes one)
  CREATE FUNCTION f AS 'id'         bind a Go function of this build to a name
  DROP FUNCTION f                   remove a user function
  SHOW TABLES / SHOW VIEWS          list tables and views / views only
  DESCRIBE t                        show the columns of a table or view
  SHOW CREATE TABLE t / VIEW v      show the DDL of a table or view
  EXPLAIN q                         show the plan of a query or INSERT
  SELECT ...                        run a query and show its result as it changes
  INSERT INTO t SELECT ...          submit a background job and print its id
  BEGIN STATEMENT SET; INSERT ...; END;
                                    run the INSERTs as one job (also EXECUTE STATEMENT SET BEGIN ... END)
  SHOW JOBS                         list jobs: id, name, state, uptime, rows in/out
  SHOW FUNCTIONS                    list the aggregate, scalar and user functions
  STOP JOB 'id'                     stop a job cleanly
  STOP JOB 'id' WITH SAVEPOINT      write a savepoint, stop the job, print the folder
                                    (resume: SET 'execution.savepoint.path' = '<folder>')
  HELP                              show this help
Shell commands:
  QUIT, EXIT, Ctrl-D                leave the shell (running jobs are stopped)
  Ctrl-C                            cancel the input or stop the running query
  q                                 stop the running query
  Tab, Up/Down                      complete a word, recall history (~/.weir_history)
Result mode: SET 'sql-client.execution.result-mode' = 'table' | 'changelog' | 'tableau'.
`
