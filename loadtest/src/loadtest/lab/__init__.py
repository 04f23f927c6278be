"""The lab's machinery: processes, apps, the database and its dataset, CPU pinning and readings,
memory, the host, start-up timing and the progress line."""
