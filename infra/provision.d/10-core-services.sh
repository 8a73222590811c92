# PostgreSQL, Redis and NATS (JetStream on): installed from Debian when missing, started when down.
apt_install postgresql redis-server nats-server

if ! pg_isready -q -h 127.0.0.1 -p 5432; then
  pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start
  for _ in $(seq 1 50); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 0.2; done
fi
# Drael's own role and database (trust auth on local machines; production passes DATABASE_URL).
if ! psql -h 127.0.0.1 -U postgres -tAc "select 1 from pg_database where datname='drael'" 2>/dev/null | grep -q 1; then
  su postgres -c "psql -qc 'create database drael'" 2>/dev/null || psql -h 127.0.0.1 -U postgres -qc 'create database drael'
fi

if ! redis-cli -h 127.0.0.1 ping >/dev/null 2>&1; then
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/drael.log
fi

if ! (exec 3<>/dev/tcp/127.0.0.1/4222) 2>/dev/null; then
  mkdir -p /var/lib/nats-server
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
  for _ in $(seq 1 50); do (exec 3<>/dev/tcp/127.0.0.1/4222) 2>/dev/null && break; sleep 0.2; done
fi
